# The worker image: compiled TypeScript plus the workflow bundle built ahead of time.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    NODE_OPTIONS=--max-old-space-size=1536
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
USER node
CMD ["node", "dist/worker/main.js"]
