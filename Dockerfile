# The worker image: compiled TypeScript plus the workflow bundle built ahead of time.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
WORKDIR /app
# MALLOC_ARENA_MAX: glibc's allocator keeps an arena per thread (the SDK's core runs many), and
# the memory freed in them stays in the RSS: with two, a worker with 2,000 shipments in tracking
# held 470 MB instead of 675 (docs/benchmarks.md).
ENV NODE_ENV=production WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    NODE_OPTIONS=--max-old-space-size=1536 MALLOC_ARENA_MAX=2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
USER node
CMD ["node", "dist/worker/main.js"]
