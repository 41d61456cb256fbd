# One image for every notify process; each Deployment (and the migrate Job) picks its entry point,
# e.g. `node gateway/dist/server.js` or `node migrate/dist/migrate.js`.
FROM node:22-bookworm-slim AS build
# corepack needs the registry's signatures; a registry without them (a mirror) falls back to npm.
RUN corepack enable pnpm && corepack prepare pnpm@10.34.9 --activate || npm install -g pnpm@10.34.9
WORKDIR /src
COPY . .
ENV CI=true TURBO_TELEMETRY_DISABLED=1
RUN scripts/image-tree.sh /app

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app /app
# The numeric id of Debian's node user, so runAsNonRoot can check it.
USER 1000:1000
EXPOSE 3000
CMD ["node", "gateway/dist/server.js"]
