// Runs once when the server starts, before it answers requests.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startGatehouse } = await import("./lib/lifecycle/lifecycle");
    await startGatehouse();
  }
}
