// esbuild plugin for the executables. yargs measures every help line with string-width (it builds its
// help text on every command run), and string-width's module start-up creates an Intl.Segmenter and
// Unicode-property regexes: ~25 ms of each CLI run. Printable ASCII has width = length in every
// string-width version we bundle, so that case is answered directly; anything else loads the real
// module (the version the importer would have got) on first use.
import path from 'node:path';

export const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData?.real) return undefined;
      const real = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: { real: true },
      });
      if (real.errors.length > 0) return { errors: real.errors };
      const shown = path.relative(build.initialOptions.absWorkingDir ?? process.cwd(), real.path);
      return { path: shown, namespace: 'lazy-string-width', pluginData: { real: real.path } };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `let real;
export default function stringWidth(text, options) {
  if (typeof text === 'string' && /^[\\x20-\\x7e]*$/.test(text)) return text.length;
  real ??= require(${JSON.stringify(args.pluginData.real)}).default;
  return real(text, options);
}
`,
      resolveDir: path.dirname(args.pluginData.real),
      loader: 'js',
    }));
  },
};
