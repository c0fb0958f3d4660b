/** One of the bot's summary comments: its id and its summary marker's value (`<head sha>:<nonce>`). */
export interface SummaryComment {
  id: number
  tag: string
}

/** How a provider lists, creates, edits and deletes the bot's summary comments on its platform. */
export interface SummaryStore {
  /** The bot's summary comments, any order. */
  list(): Promise<SummaryComment[]>
  /** Creates the comment; a create that landed behind an error must come back as the stored one. */
  create(body: string): Promise<{ id: number }>
  edit(id: number, body: string): Promise<{ id: number }>
  remove(id: number): Promise<void>
  /** The platform said the comment does not exist (deleted meanwhile). */
  isNotFound(error: unknown): boolean
}

/** One write of the summary. */
export interface SummaryWrite {
  reviewedHead: string
  /** The change's head when publishing; a review of an older head never overwrites the newer one's summary. */
  currentHead: string
  /** The prepared body, markers included (the store's create finds a landed create by its marker). */
  body: string
  warn(message: string, error?: unknown): void
}

/** What happened to the summary: "kept" when it was left as it was (it holds a newer head's review). */
export interface SummaryOutcome {
  id: number
  action: "created" | "updated" | "kept"
}

/**
 * One summary comment per change, though neither GitLab nor GitHub has locks and two runs may
 * publish at once: the oldest of the bot's summaries is the one; a younger one (ours just created,
 * or a leftover) gives way and is deleted. A review of an older head never overwrites the summary
 * of the current head.
 */
export async function upsertSummary(store: SummaryStore, write: SummaryWrite): Promise<SummaryOutcome> {
  const { body, warn } = write
  const summaries = async () => (await store.list()).sort((a, b) => a.id - b.id)
  const deleteYounger = async (found: readonly SummaryComment[], keep: number) => {
    for (const extra of found.filter((comment) => comment.id > keep)) {
      await store
        .remove(extra.id)
        .catch((error: unknown) => warn(`could not delete the duplicate summary comment ${extra.id}`, error))
    }
  }
  const writable = (comment: SummaryComment) =>
    write.reviewedHead === write.currentHead || comment.tag.split(":")[0] !== write.currentHead

  let found = await summaries()
  if (found.length === 0) {
    const created = await store.create(body)
    found = await summaries()
    if (found[0] === undefined || found[0].id === created.id) {
      await deleteYounger(found, created.id)
      return { id: created.id, action: "created" }
    }
    // Another run's summary landed first: ours gives way.
    await store.remove(created.id)
    found = found.filter((comment) => comment.id !== created.id)
  }
  const keep = found[0]!
  if (!writable(keep)) {
    warn(
      `summary comment ${keep.id} left as it is: it holds the review of the current head ${write.currentHead.slice(0, 8)}`,
    )
    await deleteYounger(found, keep.id)
    return { id: keep.id, action: "kept" }
  }
  try {
    const edited = await store.edit(keep.id, body)
    await deleteYounger(found, keep.id)
    return { id: edited.id, action: "updated" }
  } catch (error) {
    // Deleted meanwhile (by a person, or by a concurrent run giving way): start over once.
    if (!store.isNotFound(error)) throw error
    const created = await store.create(body)
    await deleteYounger(await summaries(), created.id)
    return { id: created.id, action: "created" }
  }
}
