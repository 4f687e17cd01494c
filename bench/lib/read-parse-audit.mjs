// Floor for `audit`: a bare Node script that reads and parses the audit trail of a store (argv[2]),
// every line's hash checked (lib/audit-trail.mjs), and prints how many entries it read.
import { readAuditTrail } from './audit-trail.mjs';

process.stdout.write(`${readAuditTrail(process.argv[2])}\n`);
