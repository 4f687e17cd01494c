// The key order of a record on disk as SESSION_README documents it, written out here on purpose (not
// read from the build): the tests compare what the code writes against the documentation.
export const RECORD_KEYS = [
  'schema_version',
  'agent_id',
  'agent_name',
  'purpose',
  'created_at',
  'last_updated',
  'phase',
  'metadata',
  'resume_ready',
  'history',
  'error_count',
  'last_error',
  'parent_session_id',
];
