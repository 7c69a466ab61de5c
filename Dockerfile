# One Gatehouse instance per container. Built as the tested artefact is: `npm run build`, then
# scripts/package-standalone.sh, the script e2e/standalone.spec.ts runs into an empty folder and
# starts there. Not built in this repository's CI (no container registry is reachable there).
#
#   docker build -t gatehouse .
#   docker run --env-file instances/acme/gatehouse.env -e HOST=0.0.0.0 -e DATABASE_URL=pglite:/data/pglite \
#     -e MAIL_OUTBOX_DIR=/data/outbox -v gatehouse-acme:/data -p 127.0.0.1:3101:3000 gatehouse
# (compose.yaml does the same for one client.)
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
# Every dependency, dev ones included: `next build` needs TypeScript, and postinstall generates the Prisma client.
RUN npm ci
RUN npm run build && bash scripts/package-standalone.sh /app

FROM ${NODE_IMAGE}
# The packaged folder holds only the node_modules the server traced at build time: a subset of
# the production dependencies, no dev dependency, no npm install in this stage.
WORKDIR /app
COPY --from=build /app /app
# The application files stay root's (read-only to the server); the data volume is the server's.
RUN mkdir -p /data && chown node:node /data
USER node
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=pglite:/data/pglite \
    MAIL_OUTBOX_DIR=/data/outbox \
    MALLOC_MMAP_THRESHOLD_=131072
# The embedded database (PGlite) and its lock, and the mail outbox: back up this volume, or use
# `npm run db:backup` (README).
VOLUME /data
EXPOSE 3000
# Liveness (/api/health); /api/health/ready answers 503 while draining, for a load balancer.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# server.mjs drains in-flight requests on SIGTERM (SHUTDOWN_GRACE_MS, default 10 s): give the
# container longer than that before it is killed (compose.yaml: stop_grace_period).
STOPSIGNAL SIGTERM
# Lean at rest: the young generation's size and glibc's mmap threshold (with the ENV above) are read
# at process start, so they belong to the command (lib/server-contract.mjs, LEAN_START).
CMD ["node", "--max-semi-space-size=2", "server.mjs"]
