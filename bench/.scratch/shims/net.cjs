module.exports = process.getBuiltinModule('node:net');
