/**
 * How the leaf survives a reload. A reader takes the last entry of the file as the leaf, so a leaf
 * moved without an append is written down as a `bonsai.checkout` custom entry under it (a root
 * for "before the first entry"); custom entries never reach the model.
 */
import { CHECKOUT_CUSTOM_TYPE, type CustomEntry, isCheckoutMarker } from "../format/entry-types.js";
import type { NewEntry } from "./new-entries.js";
import type { TreeIndex } from "./tree.js";

/**
 * The leaf a file implies: its last entry, unless that is a bonsai.checkout marker, which stands
 * for the entry it was written under (or for "before the first entry" when it is a root).
 */
export function leafFromFile(index: TreeIndex): string | null {
  const last = index.last();
  if (!last) return null;
  if (isCheckoutMarker(last)) {
    return last.parentId !== null && index.has(last.parentId) ? last.parentId : null;
  }
  return last.id;
}

/** The marker that makes `leafId` the leaf a reader infers; it is appended under that leaf. */
export function checkoutFields(leafId: string | null): NewEntry<CustomEntry> {
  return { type: "custom", customType: CHECKOUT_CUSTOM_TYPE, data: { leafId } };
}
