import type { Database } from "../db"
import { searchUsers } from "../users"

/** GET /admin/users?q=… for the admin search box; only admin sessions may call it. */
export async function handleUserSearch(
  db: Database,
  request: Request,
  session: { isAdmin: boolean },
): Promise<Response> {
  if (!session.isAdmin) return new Response("forbidden", { status: 403 })
  const query = new URL(request.url).searchParams.get("q") ?? ""
  return Response.json(await searchUsers(db, query))
}
