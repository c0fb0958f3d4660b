// A local npm registry for the package test: it serves our packed tarball as if it were published
// and passes every other package through to the real registry (the only network this machine has),
// so `bunx opencode-reviewer@<version>` resolves exactly as it will once the package is on npm.

export interface LocalRegistry {
  url: string
  /** Paths requested so far, in order. */
  requests: string[]
  close(): Promise<void>
}

export async function startLocalRegistry(options: {
  tarball: string
  manifest: Record<string, unknown>
  upstream?: string
}): Promise<LocalRegistry> {
  const upstream = options.upstream ?? "https://registry.npmjs.org"
  const bytes = new Uint8Array(await Bun.file(options.tarball).arrayBuffer())
  const name = String(options.manifest.name)
  const version = String(options.manifest.version)
  const dist = {
    integrity: `sha512-${new Bun.CryptoHasher("sha512").update(bytes).digest("base64")}`,
    shasum: new Bun.CryptoHasher("sha1").update(bytes).digest("hex"),
  }
  const requests: string[] = []
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      requests.push(url.pathname)
      if (url.pathname === `/${name}`) {
        const tarball = `${url.origin}/${name}/-/${name}-${version}.tgz`
        return Response.json({
          name,
          "dist-tags": { latest: version },
          versions: { [version]: { ...options.manifest, dist: { ...dist, tarball } } },
        })
      }
      if (url.pathname === `/${name}/-/${name}-${version}.tgz`)
        return new Response(bytes, { headers: { "content-type": "application/octet-stream" } })
      const answer = await fetch(`${upstream}${url.pathname}`, {
        headers: { accept: request.headers.get("accept") ?? "application/json" },
      })
      return new Response(answer.body, {
        status: answer.status,
        headers: { "content-type": answer.headers.get("content-type") ?? "application/json" },
      })
    },
  })
  return { url: server.url.href, requests, close: async () => void server.stop(true) }
}
