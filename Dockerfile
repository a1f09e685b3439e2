# The all-in-one server (`awaken up`) on embedded SQLite, its data in the /data volume.
#   docker build -t awaken . && docker run -p 4600:4600 -v awaken-data:/data awaken
# NODE_IMAGE: any Node 22+ image with npm at /usr/local/lib/node_modules/npm and a `node` user
# (the official ones do); CI, without registry access, passes one it made from the host's Node.
ARG NODE_IMAGE=node:24-bookworm-slim
# APP_SOURCE=build (the default) compiles the app in the image (npm ci needs the npm registry).
# APP_SOURCE=prebuilt takes bin/, dist/, package files and a production node_modules from the context.
# No default here but in the FROM below: buildah 1.28 does not see an ARG's default there.
ARG APP_SOURCE

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 ships N-API prebuilds: no compiler, no install script, no download but the registry's.
RUN ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
COPY tsconfig.json tsconfig.build.json vite.console.config.ts ./
COPY bin ./bin
COPY src ./src
RUN ["npm", "run", "build"]
RUN ["npm", "prune", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"]

FROM ${NODE_IMAGE} AS prebuilt
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY dist ./dist
COPY node_modules ./node_modules

# `COPY --from` takes no build argument; a stage named by one does.
FROM ${APP_SOURCE:-build} AS app

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=app /app/package.json /app/package-lock.json ./
COPY --from=app /app/bin ./bin
COPY --from=app /app/dist ./dist
COPY --from=app /app/node_modules ./node_modules
# Exec-form RUN: the image needs no shell. /data is the server's data dir, owned by its user.
RUN ["node", "-e", "require('fs').mkdirSync('/data',{mode:0o700});require('fs').chownSync('/data',1000,1000)"]
VOLUME ["/data"]
USER node
EXPOSE 4600
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:4600/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/awaken.js"]
CMD ["up", "--host", "0.0.0.0", "--port", "4600", "--data-dir", "/data"]
