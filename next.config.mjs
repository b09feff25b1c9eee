// Next.js config for the operator console. The console runs inside `baton serve` (a custom
// server, server/http/console-server.ts); this file only shapes the build. Plain JS so that every
// start does not have to transpile it.
/** @type {import('next').NextConfig} */
const config = {
  // The app has its own tsconfig (bundler resolution, JSX); the daemon's tsconfig stays nodenext.
  typescript: { tsconfigPath: 'tsconfig.app.json' },
  // Server-sent events must leave the process as they are written: a gzip stream would hold
  // them back. The console is an ops tool on a local or internal port; size does not matter.
  compress: false,
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
