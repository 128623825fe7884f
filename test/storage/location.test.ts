/** Session locations: file paths, sqlite:PATH#ID, postgres://…#ID, and the errors for malformed ones. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatLocation, LocationError, parseLocation, redactPassword, requireSessionId } from "../../src/storage/location.js";
import { storeOf } from "../../src/storage/stores.js";

describe("parseLocation", () => {
  it("reads plain paths, relative or absolute, and Windows drives as files", () => {
    assert.deepEqual(parseLocation("session.jsonl"), { kind: "file", path: "session.jsonl" });
    assert.deepEqual(parseLocation("/tmp/a b/x.jsonl"), { kind: "file", path: "/tmp/a b/x.jsonl" });
    assert.deepEqual(parseLocation("C:\\work\\x.jsonl"), { kind: "file", path: "C:\\work\\x.jsonl" });
    assert.deepEqual(parseLocation("notes:today.jsonl"), { kind: "file", path: "notes:today.jsonl" });
    assert.deepEqual(parseLocation("file:///tmp/x.jsonl"), { kind: "file", path: "/tmp/x.jsonl" });
  });

  it("reads sqlite locations with and without a session id", () => {
    assert.deepEqual(parseLocation("sqlite:db/s.sqlite#abc-1"), { kind: "sqlite", path: "db/s.sqlite", sessionId: "abc-1" });
    assert.deepEqual(parseLocation("sqlite:///var/s.db#x"), { kind: "sqlite", path: "/var/s.db", sessionId: "x" });
    assert.deepEqual(parseLocation("sqlite:s.db"), { kind: "sqlite", path: "s.db" });
    // the last # separates the id, which may be percent-encoded
    assert.deepEqual(parseLocation("sqlite:a#b.db#id%20two"), { kind: "sqlite", path: "a#b.db", sessionId: "id two" });
  });

  it("reads postgres and postgresql URLs, keeping everything but the fragment for pg", () => {
    assert.deepEqual(parseLocation("postgres://u:p@h:5433/db?sslmode=disable#s1"), {
      kind: "postgres",
      connectionString: "postgres://u:p@h:5433/db?sslmode=disable",
      sessionId: "s1",
    });
    assert.deepEqual(parseLocation("postgresql://h/db"), { kind: "postgres", connectionString: "postgresql://h/db" });
    // everything from PG* variables
    assert.deepEqual(parseLocation("postgres://#s2"), { kind: "postgres", connectionString: "postgres://", sessionId: "s2" });
    assert.deepEqual(parseLocation("postgres:#s2"), { kind: "postgres", connectionString: "postgres://", sessionId: "s2" });
  });

  it("refuses malformed locations with the reason", () => {
    assert.throws(() => parseLocation(""), /empty location/);
    assert.throws(() => parseLocation("sqlite:#abc"), /no database path after sqlite:/);
    assert.throws(() => parseLocation("sqlite:x.db#"), /empty session id/);
    assert.throws(() => parseLocation("sqlite:x.db#%zz"), /not valid percent-encoding/);
    assert.throws(() => parseLocation("sqlite:x.db#a%0Ab"), /control characters/);
    assert.throws(() => parseLocation("postgres:host/db#x"), /expected postgres:\/\//);
    assert.throws(() => parseLocation("postgres://u:secret@[bad#x"), (error: Error) => {
      assert.ok(error instanceof LocationError);
      assert.match(error.message, /not a valid PostgreSQL URL/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
    assert.throws(() => parseLocation("mysql://h/db#x"), /unknown store "mysql:"/);
    // every refusal of a PostgreSQL location names it without the password
    for (const text of ["postgres://u:secret@h/db#", "postgres://u:secret@h/db#%zz", `postgres://u:secret@h/db#${"x".repeat(201)}`]) {
      assert.throws(() => parseLocation(text), (error: Error) => {
        assert.match(error.message, /^postgres:\/\/u@h\/db/);
        assert.doesNotMatch(error.message, /secret/);
        return true;
      });
    }
  });

  it("formats locations that parse back to the same thing, without passwords", () => {
    for (const text of ["sqlite:/tmp/s.db#a%23b", "postgres://u@h:1/db#x", "/tmp/x.jsonl", "sqlite:s.db"]) {
      assert.equal(formatLocation(parseLocation(text)), text);
    }
    assert.equal(formatLocation(parseLocation("postgres://u:pw@h/db#x")), "postgres://u@h/db#x");
    assert.equal(redactPassword("postgresql://a:b:c@h/d"), "postgresql://a@h/d");
    assert.equal(redactPassword("postgres://h/d"), "postgres://h/d");
  });

  it("asks for a session id where one is needed", () => {
    assert.throws(() => requireSessionId(parseLocation("sqlite:s.db")), /which session\? add #SESSION_ID \(bonsai ls sqlite:s.db/);
    assert.equal(requireSessionId(parseLocation("postgres://h/db#x")), "x");
  });
});

describe("what a location names, and its paths", () => {
  const at = (text: string) => parseLocation(text);

  it("a whole database names a store; a database session or a file names one session", () => {
    assert.equal(storeOf(at("sqlite:db.sqlite")).namesStore(at("sqlite:db.sqlite")), true);
    assert.equal(storeOf(at("sqlite:db.sqlite#s1")).namesStore(at("sqlite:db.sqlite#s1")), false);
    assert.equal(storeOf(at("postgres://u@h/db")).namesStore(at("postgres://u@h/db")), true);
    assert.equal(storeOf(at("postgres://u@h/db#s1")).namesStore(at("postgres://u@h/db#s1")), false);
    assert.equal(storeOf(at("s.jsonl")).namesStore(at("s.jsonl")), false);
  });

  it("relative file and database paths resolve against a directory; a PostgreSQL URL comes back as it is", () => {
    const file = at("work/s.jsonl");
    assert.deepEqual(storeOf(file).resolvedAgainst(file, "/home/me"), { kind: "file", path: "/home/me/work/s.jsonl" });
    const sqlite = at("sqlite:data/db.sqlite#s1");
    assert.deepEqual(storeOf(sqlite).resolvedAgainst(sqlite, "/home/me"), { kind: "sqlite", path: "/home/me/data/db.sqlite", sessionId: "s1" });
    const pg = at("postgres://u:secret@h/db#s1");
    assert.equal(storeOf(pg).resolvedAgainst(pg, "/home/me"), pg);
  });
});
