module.exports = process.getBuiltinModule('node:dgram');
