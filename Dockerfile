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
# glibc gives freed allocations of 64 KiB or more back at once (ADR 19): the initial list's
# socket reads and the Registry's gunzip would otherwise stay resident.
ENV MALLOC_MMAP_THRESHOLD_=65536
ENV MALLOC_TRIM_THRESHOLD_=65536
# A numeric non-root user, so runAsNonRoot can verify it; nothing is written to the filesystem,
# so the container runs with a read-only root.
USER 65532:65532
EXPOSE 9090
# V8's young generation at most 4 MiB per semi-space (ADR 69): the initial list's garbage
# would otherwise grow it to 16 MiB each, a peak every replica pays for.
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/main.mjs"]
CMD ["serve"]
