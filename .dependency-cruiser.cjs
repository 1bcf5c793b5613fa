// Import rules checked in npm test: no cycles among the runtime's and generator's modules (type-only imports are
// erased, so they do not count), the runtime never imports the generator, generated code imports only the runtime.
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "A module may not import itself through others.",
      from: {},
      to: { circular: true },
    },
    {
      name: "runtime-not-generator",
      severity: "error",
      comment: "One direction of flow: the runtime never imports the generator or generated code.",
      from: { path: "^runtime/" },
      to: { path: "^(generator|generated)/" },
    },
    {
      name: "generated-only-runtime",
      severity: "error",
      comment: "Generated code imports only the runtime (and itself).",
      from: { path: "^generated/" },
      to: { path: "^(generator|examples|test|bench)/" },
    },
    {
      name: "rpc-is-the-floor",
      severity: "error",
      comment: "The JSON-RPC layer knows no MCP, no era, no server and no concrete transport.",
      from: { path: "^runtime/rpc/" },
      to: { path: "^runtime/(mcp|eras|server|transports|durable|store|auth)/" },
    },
    {
      name: "mcp-below-server",
      severity: "error",
      comment: "Era-neutral MCP and the eras sit below McpServer and the concrete transports.",
      from: { path: "^runtime/(mcp|eras)/" },
      to: { path: "^runtime/(server|transports)/" },
    },
    {
      name: "transports-below-mcp",
      severity: "error",
      comment: "Transports move messages: they know the JSON-RPC layer and the HTTP entry's era rules, not McpServer.",
      from: { path: "^runtime/transports/" },
      to: { path: "^runtime/server/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
