# syntax=docker/dockerfile:1
# One image recipe for every Relaygram app:
#   docker build --build-arg APP=ingress -t relaygram-ingress .
# APP: ingress | dispatcher | gateway | standalone (default). The CLI is in every image:
#   docker compose exec dispatcher npx relaygram dead list
# The standalone app needs REDIS_URL here: the image has no redis-server to fall back on.

ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
# Dependency install scripts stay off (the root `prepare` would build); the build is explicit.
RUN npm ci --ignore-scripts \
 && NX_DAEMON=false NX_NO_CLOUD=true npx nx run-many -t build --output-style=static
# The runtime's file layout: every workspace manifest (npm ci checks them against the
# lockfile), the builds of apps and libs, the CLI's launcher, the admin page and the
# shipped config. No sources, tests or tools.
RUN mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && for dir in apps/* libs/* tools/*; do \
      [ -f "$dir/package.json" ] || continue; \
      mkdir -p "/out/$dir" && cp "$dir/package.json" "/out/$dir/"; \
      case "$dir" in apps/*|libs/*) cp -r "$dir/dist" "/out/$dir/dist" ;; esac; \
    done \
 && cp -r apps/cli/bin /out/apps/cli/bin \
 && cp -r libs/admin/public /out/libs/admin/public \
 && cp -r config /out/config

FROM ${NODE_IMAGE} AS runtime
ARG APP=standalone
ENV NODE_ENV=production \
    APP=${APP} \
    RELAYGRAM_CONFIG=/app/config/relaygram.yaml
WORKDIR /app
COPY --from=build /out ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
USER node
# Public ports (PORT): ingress and standalone 3000, gateway 3001, dispatcher 3002. The
# management listener (/metrics, /admin) is PORT + 100 on ADMIN_HOST (set 0.0.0.0 to
# reach it from outside the container).
EXPOSE 3000 3001 3002
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const p=process.env.PORT||({gateway:3001,dispatcher:3002})[process.env.APP]||3000;fetch('http://127.0.0.1:'+p+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# exec: node becomes PID 1 and gets SIGTERM itself, to finish in-flight work.
CMD ["sh", "-c", "exec node apps/${APP}/dist/main.js"]
