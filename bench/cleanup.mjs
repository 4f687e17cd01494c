export const name = 'cleanup';
export const title = 'Issue 4: cleanup';
export async function run() {
  return { skipped: 'placeholder' };
}
