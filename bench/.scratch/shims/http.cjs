module.exports = process.getBuiltinModule('node:http');
