/** What a list call's page offers (the SDK's `PageCursor` has the same members). */
export interface ListPage<T> extends AsyncIterable<T> {
  data: T[];
  next_page: string | null;
  getPaginatedItems(): T[];
  hasNextPage(): boolean;
  getNextPage(): Promise<ListPage<T>>;
  iterPages(): AsyncGenerator<ListPage<T>>;
}

/** What a list call returns (the SDK's `PagePromise` has the same members). */
export interface ListPagePromise<T> extends PromiseLike<ListPage<T>>, AsyncIterable<T> {}

/** A list result as the wire carries it: the items and the cursors. */
export interface PageBody<T> {
  data: T[];
  next_page: string | null;
  prev_page?: string | null;
}

/**
 * One page of a list, with the parts of the SDK's `PageCursor` that code uses: `.data`,
 * `next_page`, `hasNextPage()`, `getNextPage()`, `iterPages()` and `for await` over every item of
 * this page and the ones after it.
 */
export class InProcessPage<T> implements ListPage<T> {
  data: T[];
  next_page: string | null;
  prev_page?: string | null;

  constructor(
    body: PageBody<T>,
    private readonly fetchPage: (cursor: string) => Promise<PageBody<T>>,
  ) {
    this.data = body.data;
    this.next_page = body.next_page;
    if (body.prev_page !== undefined) this.prev_page = body.prev_page;
  }

  getPaginatedItems(): T[] {
    return this.data;
  }

  hasNextPage(): boolean {
    return this.next_page !== null && this.next_page !== "" && this.data.length > 0;
  }

  async getNextPage(): Promise<InProcessPage<T>> {
    if (!this.hasNextPage() || this.next_page === null)
      throw new Error(
        "No next page expected; please check `.hasNextPage()` before calling `.getNextPage()`.",
      );
    return new InProcessPage(await this.fetchPage(this.next_page), this.fetchPage);
  }

  async *iterPages(): AsyncGenerator<InProcessPage<T>> {
    let page: InProcessPage<T> = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * What a list call returns, as the SDK's `PagePromise`: awaited, the first page; iterated with
 * `for await`, every item of every page.
 */
export class InProcessPagePromise<T> implements ListPagePromise<T> {
  private readonly first: Promise<InProcessPage<T>>;

  constructor(first: Promise<InProcessPage<T>>) {
    this.first = first;
    // Iterating without awaiting is a normal use; the failure still reaches whoever reads it.
    first.catch(() => {});
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaited like the SDK's.
  then<A = InProcessPage<T>, B = never>(
    onFulfilled?: ((page: InProcessPage<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.first.then(onFulfilled, onRejected);
  }

  catch<B = never>(
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<InProcessPage<T> | B> {
    return this.first.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<InProcessPage<T>> {
    return this.first.finally(onFinally);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* await this.first;
  }
}
