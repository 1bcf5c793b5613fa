// Loads an optional peer dependency of mcpgen/auth on first use, with an error naming what to install when it is missing.

/** The error of a peer that is not installed: what to install, and what needs it. */
export class MissingPeerError extends Error {
  constructor(
    readonly packageName: string,
    purpose: string,
  ) {
    super(
      `mcpgen/auth needs the package "${packageName}" for ${purpose}; install it beside mcpgen: npm install ${packageName}`,
    );
    this.name = "MissingPeerError";
  }
}

/** Runs `load`, a literal dynamic import of the package (so bundlers and tools see it); a missing module becomes MissingPeerError. */
export async function loadPeer<T>(packageName: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleNotFound(error, packageName)) throw new MissingPeerError(packageName, purpose);
    throw error;
  }
}

function isModuleNotFound(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
    return error.message.includes(`'${packageName}'`) || error.message.includes(`"${packageName}"`);
  // Bundlers and other runtimes word it their own way.
  return /cannot find (module|package)/i.test(error.message) && error.message.includes(packageName);
}
