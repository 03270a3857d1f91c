module.exports = process.getBuiltinModule('node:util');
