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
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
