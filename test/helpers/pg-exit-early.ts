/**
 * A child process that queues PostgreSQL appends and exits without awaiting close():
 *   node --import tsx pg-exit-early.ts LOCATION
 * The durability contract says the lost lines are reported on stderr, not dropped in silence.
 */
import { openSessionAt } from "../../src/storage/open.js";
import { sessionLines } from "./store-contract.js";

const { backend } = await openSessionAt(process.argv[2]);
backend!.append(sessionLines("early", 20));
process.exit(0);
