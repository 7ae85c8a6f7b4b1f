/** The multi-process tests on PostgreSQL: worker processes sharing one schema. */
import { useSharedServer } from "../postgres/helpers.js";
import { limitProcessesSuite } from "./limit.js";

useSharedServer();
limitProcessesSuite("postgres");
