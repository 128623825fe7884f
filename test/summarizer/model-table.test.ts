/** pi-ai's model table, loaded alone (summarizer/model-table.ts), answers as the package's getModel does. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { modelLookup } from "../../src/summarizer/model-table.js";

describe("model table", () => {
  it("gives every model's context window as pi-ai's getModel does, and nothing for an unknown one", async () => {
    const lookup = await modelLookup();
    const piAi = await import("@mariozechner/pi-ai");
    let checked = 0;
    for (const provider of piAi.getProviders()) {
      for (const model of piAi.getModels(provider as never)) {
        assert.equal(lookup(provider, model.id)?.contextWindow, model.contextWindow, `${provider}/${model.id}`);
        checked++;
      }
    }
    assert.ok(checked > 50, `${checked} models`);
    assert.equal(lookup("anthropic", "no-such-model"), undefined);
  });
});
