# The worker image: compiled TypeScript plus the workflow bundle built ahead of time.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
WORKDIR /app
# jemalloc instead of glibc's allocator: most of a busy worker's memory is outside the V8 heaps,
# and glibc keeps what an import's peak took (10,000 shipments to tracking: see
# docs/configuration.md, "Worker memory"). One path for every architecture.
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2
ENV NODE_ENV=production WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    NODE_OPTIONS=--max-old-space-size=1536 LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
USER node
CMD ["node", "dist/worker/main.js"]
