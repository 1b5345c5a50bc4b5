# syntax=docker/dockerfile:1
# Same Node major as development (ADR 10). Scripts are skipped in the image: the `node`
# devDependency exists only to put Node 24 on the PATH of npm scripts on machines without it.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM node:24-bookworm-slim AS production-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=production-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# V8's compile cache, warmed at build time (running the CLI loads every module): start-up is mostly
# module loading. At run time the root is read-only, so Node only reads it.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN node dist/cli/main.js --version
# A numeric non-root user, so runAsNonRoot can verify it; nothing is written to the filesystem,
# so the container runs with a read-only root.
USER 65532:65532
EXPOSE 9090
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]
