/**
 * Adapters from other logger conventions to workpool's `logger.info(fields, message)`.
 */
import type { Logger, LogFields } from "./events.js";

/** A logger that takes the message first and the fields second, as winston does: `logger.info(message, fields)`. */
export interface MessageFirstLogger {
  debug(message: string, fields: LogFields): unknown;
  info(message: string, fields: LogFields): unknown;
  warn(message: string, fields: LogFields): unknown;
  error(message: string, fields: LogFields): unknown;
}

/**
 * Wraps a message-first logger (winston) for the `logger` option:
 * `new Workpool(store, { logger: messageFirstLogger(winstonLogger) })`.
 */
export function messageFirstLogger(logger: MessageFirstLogger): Logger {
  return {
    debug: (fields, message) => void logger.debug(message, fields),
    info: (fields, message) => void logger.info(message, fields),
    warn: (fields, message) => void logger.warn(message, fields),
    error: (fields, message) => void logger.error(message, fields),
  };
}
