/**
 * `workpool/dashboard`: the web dashboard as a Node request handler, over the admin API.
 */
export { dashboardHandler, CSRF_HEADER, TOKEN_COOKIE, type DashboardHandler } from "./handler.js";
export { isLoopback, type DashboardAuthFunction, type DashboardLogger, type DashboardOptions } from "./options.js";
export type { BulkAnswer, BulkResult } from "./bulk.js";
export type { RetryAllAnswer } from "./retry-all.js";
