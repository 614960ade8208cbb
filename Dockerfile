# syntax=docker/dockerfile:1

# Build: type-check and compile src/ to dist/src/ (tests are not compiled).
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime: production dependencies and compiled code only, owned by the unprivileged
# user that runs them, so the embedded store can be created in /app/.data.
FROM node:22-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --chown=node:node --from=build /app/dist ./dist
# The explorer's static files are read from the package root (tsc does not copy them).
COPY --chown=node:node src/pages/explorer ./src/pages/explorer
COPY --chown=node:node db ./db
RUN mkdir -p .data
# The embedded store (used when DATABASE_URL is unset) lives here; mount a volume to keep it.
VOLUME ["/app/.data"]
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Without DATABASE_URL the embedded store is used and its first key is printed once in the logs.
# Commands (they hand their work to the server when it holds the embedded store):
#   docker exec <container> node dist/src/commands/keys.js create --name NAME
#   docker exec <container> node dist/src/commands/import.js /path/to/file.csv
#   node dist/src/commands/migrate.js | seed.js
CMD ["node", "dist/src/main.js"]
