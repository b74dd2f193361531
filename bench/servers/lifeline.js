// Preloaded (node --import) into every server the bench starts: when the bench process goes away,
// its IPC channel closes and the server stops too, so a killed bench never leaves servers behind.
// The channel is unref'd so it does not keep the server alive or change its event loop otherwise.
if (process.channel) {
  process.channel.unref();
  process.once('disconnect', () => {
    process.kill(process.pid, 'SIGTERM');
    setTimeout(() => process.exit(1), 5000).unref();
  });
}
