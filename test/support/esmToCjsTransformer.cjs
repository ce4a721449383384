/**
 * jest's transform for the ES-module-only packages in node_modules (jest.config.js): ts-jest
 * compiles them to CommonJS, and `import.meta.url` (which CommonJS has no syntax for:
 * @platformatic/kafka's crc32c and @platformatic/wasm-utils read files next to themselves
 * with it) becomes the module file's own URL first, and a module-level
 * `const require = createRequire(import.meta.url)` goes: CommonJS has its own `require`, and
 * declaring it again is a syntax error there.
 */
const { pathToFileURL } = require('node:url');
const { TsJestTransformer } = require('ts-jest');

const IMPORT_META_URL = /\bimport\.meta\.url\b/g;
const OWN_REQUIRE = /^const require = createRequire\(import\.meta\.url\);?$/gm;

class EsmToCjsTransformer extends TsJestTransformer {
  process(source, path, options) {
    return super.process(this.withFileUrl(source, path), path, options);
  }

  processAsync(source, path, options) {
    return super.processAsync(this.withFileUrl(source, path), path, options);
  }

  getCacheKey(source, path, options) {
    return super.getCacheKey(this.withFileUrl(source, path), path, options);
  }

  withFileUrl(source, path) {
    return source
      .replace(OWN_REQUIRE, '')
      .replace(IMPORT_META_URL, JSON.stringify(pathToFileURL(path).href));
  }
}

module.exports = {
  createTransformer: (config) => new EsmToCjsTransformer(config),
};
