/**
 * A port on 127.0.0.1 where nothing listens, for tests of a server that cannot be reached. Not a
 * port that was just free: with test files running at once, the next server asking for a free
 * port (listen on 0) may get that very port, and the "dead" address answers (it did, once in ten
 * runs). The kernel hands out ports for listen(0) only from its ephemeral range (32768 and up on
 * Linux), so a low port that refuses now stays refused for the test.
 */
import { connect } from "node:net";

// low ports that fetch() does not refuse on its own ("bad ports" such as 1, 9 or 13 fail with
// "bad port" before any connection is tried)
const CANDIDATES = [2, 3, 4, 5, 6, 8, 10, 12, 14, 16];

function refuses(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED"));
  });
}

export async function refusedPort(): Promise<number> {
  for (const port of CANDIDATES) if (await refuses(port)) return port;
  throw new Error(`every one of ports ${CANDIDATES.join(", ")} on 127.0.0.1 accepts connections: none to use as a dead address`);
}
