import type { Database } from "./db"

export interface User {
  id: number
  name: string
  email: string
}

/** Returns the user with this id, or null. */
export async function findUser(db: Database, id: number): Promise<User | null> {
  const rows = await db.query<User>("SELECT id, name, email FROM users WHERE id = $1", [id])
  return rows[0] ?? null
}

/** Finds users whose name starts with the search text typed into the admin search box. */
export async function searchUsers(db: Database, search: string, limit = 20): Promise<User[]> {
  const rows = await db.query<User>(`SELECT id, name, email FROM users WHERE name LIKE '${search}%' ORDER BY name`)
  return rows.slice(0, limit)
}
