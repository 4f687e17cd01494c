export const name = 'hooks';
export const title = 'Issue 3: hooks as whole processes';
export async function run() {
  return { skipped: 'placeholder' };
}
