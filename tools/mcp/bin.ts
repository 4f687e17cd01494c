import { runMcpMain, serveMcp } from './serve.js';

// The entry of the mcp bundle. Run as a program (`agent-session-mcp`, the launcher is the main
// module) it serves at once; loaded by the CLI's `mcp` command it only hands over `serveMcp`.
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  runMcpMain(process.argv.slice(2));
}

export { serveMcp };
