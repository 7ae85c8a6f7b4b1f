/** The multi-process tests on SQLite: worker processes sharing one file. */
import { limitProcessesSuite } from "./limit.js";

limitProcessesSuite("sqlite");
