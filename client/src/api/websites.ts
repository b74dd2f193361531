import { ApiClient, segment } from './api-client.js';
import type { CallOptions, FormBody, Operation, Query, Success } from './types.js';

type List = Operation<'/api/v1/websites', 'get'>;
type Store = Operation<'/api/v1/websites', 'post'>;
type Show = Operation<'/api/v1/websites/{id}', 'get'>;
type Update = Operation<'/api/v1/websites/{id}', 'patch'>;
type Destroy = Operation<'/websites/{id}/destroy', 'delete'>;

/** The websites API ({base_url}): API key as Bearer; create and update are form-encoded. */
export class WebsitesApi extends ApiClient {
  list(query: Query<List> = {}, options?: CallOptions): Promise<Success<List>> {
    return this.call('GET', '/api/v1/websites', { query }, options);
  }

  async show(id: number | string, options?: CallOptions): Promise<Success<Show>> {
    return this.call('GET', `/api/v1/websites/${segment(id)}`, {}, options);
  }

  store(body: FormBody<Store>, options?: CallOptions): Promise<Success<Store>> {
    return this.call('POST', '/api/v1/websites', { form: body }, options);
  }

  async update(id: number | string, body: FormBody<Update>, options?: CallOptions): Promise<Success<Update>> {
    return this.call('PATCH', `/api/v1/websites/${segment(id)}`, { form: body }, options);
  }

  /** DELETE {base_url}/websites/{id}/destroy: the spec's delete path, without /api/v1. */
  async delete(id: number | string, options?: CallOptions): Promise<Success<Destroy>> {
    return this.call('DELETE', `/websites/${segment(id)}/destroy`, {}, options);
  }
}
