/** Terminal colors for the front ends (CLI and chat): on a terminal only, off with NO_COLOR. */
import pc from "picocolors";

/** Colors only for a terminal, and never when NO_COLOR is set (any value, per no-color.org). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

export type Colors = ReturnType<typeof pc.createColors>;

let cachedColors: Colors | undefined;
export function colors(): Colors {
  cachedColors ??= pc.createColors(useColor());
  return cachedColors;
}
