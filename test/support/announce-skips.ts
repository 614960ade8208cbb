/** Says once, visibly, which suites are skipped on this machine and why. */
export default function announceSkips(): void {
  if (!process.env.TEST_DATABASE_URL) {
    console.warn(
      '\n[metrics-service] TEST_DATABASE_URL is not set: the real-PostgreSQL tests are SKIPPED.' +
        '\n  Run them with TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm test\n',
    );
  }
}
