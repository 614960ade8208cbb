# syntax=docker/dockerfile:1

# Build: type-check and compile TypeScript to dist/.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime: production dependencies and compiled code only, as an unprivileged user.
FROM node:22-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The compiled code looks for its migrations beside itself (dist/db/migrations).
COPY db ./dist/db
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# DATABASE_URL must come from the environment: docker run -e DATABASE_URL=postgres://… image
# Commands in the image: node dist/src/cli/migrate.js | seed.js | import.js FILE | keys.js create --name N
CMD ["node", "dist/src/main.js"]
