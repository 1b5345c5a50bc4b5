# syntax=docker/dockerfile:1
# Same Node major as development (ADR 10). The image holds the bundle `npm run build` makes and
# nothing else of the repository: no node_modules, no sources, no fake API server (ADR 14).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped: the `node` devDependency exists only to put Node 24 on the PATH of npm
# scripts on machines without it, and this image is Node 24 already.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build.ts ./scripts/
COPY src ./src
RUN node scripts/build.ts

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/dist ./dist
# V8's compile cache, warmed at build time: the entry, and every chunk it loads, those `serve`
# loads once it is ready among them. At run time the root is read-only, so Node only reads it.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
# Node keeps one cache per set of V8 flags, so it is warmed with the ENTRYPOINT's flags.
RUN node --max-semi-space-size=4 dist/main.mjs --version \
 && node --max-semi-space-size=4 dist/warm-cache.mjs
# glibc gives freed memory back: allocations of 64 KiB or more (the chunks of a large list) get
# pages of their own, and free space at the top of its heap is trimmed past 64 KiB (ADR 19).
ENV MALLOC_MMAP_THRESHOLD_=65536
ENV MALLOC_TRIM_THRESHOLD_=65536
# A numeric non-root user, so runAsNonRoot can verify it; nothing is written to the filesystem,
# so the container runs with a read-only root.
USER 65532:65532
EXPOSE 9090
# --max-semi-space-size=4: V8's young generation stays at most 4 MiB per semi-space. At 10k Apps
# it keeps resident memory after sync at 113 MiB (159 MiB with V8's defaults), as low as
# --optimize-for-size, with more throughput and a faster start (ADR 22; BENCHMARKS.md, "Memory
# and V8 flags").
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/main.mjs"]
CMD ["serve"]
