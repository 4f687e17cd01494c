// Fallback peak-memory probe when /usr/bin/time is absent: preloaded into every measured command alike,
// it writes the process's own peak RSS (KiB) to the file descriptor named by BENCH_RSS_FD at exit.
const fs = require('node:fs');

process.on('exit', () => {
  fs.writeSync(Number(process.env.BENCH_RSS_FD), `${process.resourceUsage().maxRSS}\n`);
});
