import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redact, redactSecrets, withRedaction } from "../../src/summarizer/redact.js";
import type { SummarizeRequest, Summarizer } from "../../src/summarizer/types.js";

// Realistic shapes, assembled at run time so no scanner mistakes this file for a leak.
const fake = {
  openai: `sk-proj-${"Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z".repeat(2)}`,
  openaiLegacy: `sk-${"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0".slice(0, 48)}`,
  anthropic: `sk-ant-api03-${"Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe".repeat(3)}-AA`,
  aws: `AKIA${"IOSFODNN7EXAMPLE"}`,
  github: `ghp_${"1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"}`,
  githubPat: `github_pat_11ABCDEFG0${"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"}`,
  slack: `xoxb-${"123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"}`,
  google: `AIza${"SyD-1234567890abcdefghijklmnopqrstu"}`,
  jwt: `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.${"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}`,
};

describe("redactSecrets", () => {
  it("masks each well-known key format and names its kind", () => {
    const cases: [string, string][] = [
      [fake.openai, "openai-key"],
      [fake.openaiLegacy, "openai-key"],
      [fake.anthropic, "anthropic-key"],
      [fake.aws, "aws-access-key"],
      [fake.github, "github-token"],
      [fake.githubPat, "github-token"],
      [fake.slack, "slack-token"],
      [fake.google, "google-api-key"],
      [fake.jwt, "jwt"],
    ];
    for (const [secret, kind] of cases) {
      const text = `before ${secret} after`;
      const { text: out, counts } = redactSecrets(text);
      assert.equal(out, `before [REDACTED:${kind}] after`, `${kind}: ${out}`);
      assert.equal(counts[kind as keyof typeof counts], 1);
    }
  });

  it("keeps the scheme of bearer headers and masks the token", () => {
    const out = redact(`curl -H "Authorization: Bearer abcDEF123456ghiJKL789mnoPQR" https://api.example.com`);
    assert.equal(out, `curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api.example.com`);
  });

  it("masks secret-named assignments in env files, YAML and JSON", () => {
    const env = ["DATABASE_PASSWORD=hunter2hunter2", "STRIPE_SECRET=rk_live_51Habc9xyZ", "PORT=3000", "NODE_ENV=production"].join("\n");
    assert.equal(
      redact(env),
      ["DATABASE_PASSWORD=[REDACTED:secret]", "STRIPE_SECRET=[REDACTED:secret]", "PORT=3000", "NODE_ENV=production"].join("\n"),
    );
    assert.equal(redact(`client_secret: "Q7f9kLm2Zp4xW8vB"`), `client_secret: "[REDACTED:secret]"`);
    assert.equal(redact(`{"apiKey": "a8f3k29dk3ldk3l", "name": "demo"}`), `{"apiKey": "[REDACTED:secret]", "name": "demo"}`);
    // a specific kind wins over the generic rule, and the variable name stays readable
    assert.equal(redact(`export OPENAI_API_KEY=${fake.openai}`), "export OPENAI_API_KEY=[REDACTED:openai-key]");
  });

  it("masks PEM private key blocks, whole or cut short, and leaves public material", () => {
    const body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c2v3b4n5m6";
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    assert.equal(redact(`key:\n${pem}\ndone`), "key:\n[REDACTED:private-key]\ndone");
    const cut = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n\n[... 900 characters omitted ...]`;
    assert.ok(!redact(cut).includes("MIIEvQIBADAN"), redact(cut));
    const cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----";
    assert.equal(redact(cert), cert);
  });

  it("masks the password of a URL and keeps the rest", () => {
    assert.equal(
      redact("postgres://app:s3cr3tP4ss@db.internal:5432/main"),
      "postgres://app:[REDACTED:url-password]@db.internal:5432/main",
    );
  });

  it("leaves hashes, uuids, code and ordinary words alone", () => {
    const untouched = [
      "commit e243c41b5a9c0d7f2e8b1a3c4d5e6f708192a3b4 fixed the cut point",
      "session 550e8400-e29b-41d4-a716-446655440000 has 3 branches",
      "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "the task-force asked about risk-assessment and desk-top skills",
      "const apiKey = getEnvApiKey(provider);",
      "token: process.env.BONSAI_SERVER_TOKEN,",
      "maxTokens: 13107, keepRecentTokens: 20000",
      `password: ${"$"}{DB_PASSWORD}`,
      "we store the token in memory and never log the password",
      "AKIA is the prefix of AWS access key ids",
      "Bearer tokens are sent in the Authorization header",
    ];
    for (const text of untouched) assert.equal(redact(text), text);
  });

  it("is idempotent", () => {
    const once = redact(`a ${fake.github} b TOKEN=abc123def456ghi`);
    assert.equal(redact(once), once);
  });
});

describe("withRedaction", () => {
  it("redacts the prompt, not the system prompt, and reports what it masked", async () => {
    const seen: SummarizeRequest[] = [];
    const inner: Summarizer = {
      name: "probe",
      contextWindow: 1000,
      reasoning: true,
      async summarize(request) {
        seen.push(request);
        return { text: "ok" };
      },
    };
    const reports: unknown[] = [];
    const wrapped = withRedaction(inner, { onRedact: (counts) => reports.push(counts) });
    assert.equal(wrapped.name, "probe");
    assert.equal(wrapped.contextWindow, 1000);
    assert.equal(wrapped.reasoning, true);
    const systemPrompt = `system mentions ${fake.aws} on purpose`;
    const result = await wrapped.summarize({
      systemPrompt,
      prompt: `[Tool result]: AWS_ACCESS_KEY_ID=${fake.aws}\nGITHUB_TOKEN=${fake.github}`,
      maxTokens: 10,
      purpose: "history",
    });
    assert.equal(result.text, "ok");
    assert.equal(seen[0].systemPrompt, systemPrompt);
    assert.equal(seen[0].prompt, "[Tool result]: AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\nGITHUB_TOKEN=[REDACTED:github-token]");
    assert.deepEqual(reports, [{ "aws-access-key": 1, "github-token": 1 }]);
  });
});

/** Issue 26, defect 9: redaction is linear on adversarial input, and masks nine more common formats. */
describe("redaction under attack, and the formats it missed", () => {
  it("1 MB written to backtrack (keywords over and over) is redacted in linear time", () => {
    // the old single pattern took seconds on 10 KB of these and would take hours on 1 MB
    for (const unit of ["token", "token=", "api_key_secret-", "password: "]) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      const started = performance.now();
      redactSecrets(text);
      assert.ok(performance.now() - started < 10_000, `${JSON.stringify(unit)} × ${text.length}: ${Math.round(performance.now() - started)} ms`);
    }
  });

  it("GitLab, Stripe, npm, Hugging Face and SendGrid keys, Basic auth, curl -u, mysql -p and Azure's AccountKey are masked", () => {
    const cases: [string, string][] = [
      ["glpat-abcdefghijklmnopqrstu1", "gitlab-token"],
      ["sk_live_abcdefghijklmnop1234", "stripe-key"],
      ["npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm-token"],
      ["hf_abcdefghijklmnopqrstuvwxyzABCDEF", "huggingface-token"],
      ["SG.abcdefghijklmnopqr.abcdefghijklmnopqrstuv", "sendgrid-key"],
      ["Authorization: Basic dXNlcjpwYXNzd29yZA==", "basic-auth"],
      ["curl -u alice:s3cretpass https://api.example", "cli-password"],
      ["mysql -u root -pS3cretPw shop", "cli-password"],
      ["AccountName=x;AccountKey=abcdEFGH1234abcdEFGH1234abcd==;EndpointSuffix=core", "secret"],
    ];
    for (const [text, kind] of cases) {
      const { text: out, counts } = redactSecrets(text);
      assert.equal(counts[kind as keyof typeof counts], 1, `${text}: ${JSON.stringify(counts)}`);
      assert.doesNotMatch(out, /abcdefghijklmnop|dXNlcjpwYXNzd29yZA|s3cretpass|S3cretPw|abcdEFGH1234/, out);
    }
    // the name and the command stay readable
    assert.equal(redactSecrets("curl -u alice:s3cretpass https://api.example").text, "curl -u alice:[REDACTED:cli-password] https://api.example");
  });
});
