// The optional peer (jose) loads on first use; when it is missing the error names the package to install.
import { describe, expect, it } from "vitest";
import { MissingPeerError, loadPeer } from "../../../runtime/auth/peers.js";

describe("loading optional peers", () => {
  it("a module that is not installed becomes MissingPeerError naming it and what needs it", async () => {
    const missing = loadPeer(
      "jose-not-installed",
      "verifying JWT access tokens",
      () => import("jose-not-installed" as string),
    );
    await expect(missing).rejects.toBeInstanceOf(MissingPeerError);
    await expect(missing).rejects.toThrow(
      'mcpgen/auth needs the package "jose-not-installed" for verifying JWT access tokens; install it beside mcpgen: npm install jose-not-installed',
    );
  });

  it("other failures of the module pass through unchanged", async () => {
    const broken = new Error("SyntaxError in the module");
    await expect(loadPeer("jose", "x", () => Promise.reject(broken))).rejects.toBe(broken);
    // A missing module that is not the peer itself (one of its own imports) is not mistaken for the peer.
    const inner = Object.assign(
      new Error("Cannot find package 'other-dep' imported from /app/node_modules/jose/dist/index.js"),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    await expect(loadPeer("jose", "x", () => Promise.reject(inner))).rejects.toBe(inner);
  });
});
