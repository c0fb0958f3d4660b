/** The slice of a SQL client the app uses: parameterised queries only. */
export interface Database {
  query<Row>(sql: string, params?: unknown[]): Promise<Row[]>
}
