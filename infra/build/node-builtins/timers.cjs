// node:timers for the function bundles, loaded as require() loads it; see NODE_BUILTIN_ALIASES in infra/constructs/service-function.ts.
module.exports = process.getBuiltinModule('node:timers');
