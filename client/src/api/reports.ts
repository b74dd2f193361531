import { ApiClient, segment } from './api-client.js';
import type { CallOptions, FormBody, Operation, Query, Success } from './types.js';

type List = Operation<'/api/v1/reports', 'get'>;
type Store = Operation<'/api/v1/reports', 'post'>;
type Show = Operation<'/api/v1/reports/{id}', 'get'>;
type Update = Operation<'/api/v1/reports/{id}', 'patch'>;
type Destroy = Operation<'/api/v1/reports/{id}', 'delete'>;
type Projects = Operation<'/api/v1/projects', 'get'>;

/** The reports API, on the analyzer host ({analyzer_url}): API key as Bearer; form-encoded bodies. */
export class ReportsApi extends ApiClient {
  list(query: Query<List> = {}, options?: CallOptions): Promise<Success<List>> {
    return this.call('GET', '/api/v1/reports', { query }, options);
  }

  async show(id: number | string, options?: CallOptions): Promise<Success<Show>> {
    return this.call('GET', `/api/v1/reports/${segment(id)}`, {}, options);
  }

  store(body: FormBody<Store>, options?: CallOptions): Promise<Success<Store>> {
    return this.call('POST', '/api/v1/reports', { form: body }, options);
  }

  /** `results: 1` asks for the report's results to be generated again. */
  async update(id: number | string, body: FormBody<Update>, options?: CallOptions): Promise<Success<Update>> {
    return this.call('PATCH', `/api/v1/reports/${segment(id)}`, { form: body }, options);
  }

  async delete(id: number | string, options?: CallOptions): Promise<Success<Destroy>> {
    return this.call('DELETE', `/api/v1/reports/${segment(id)}`, {}, options);
  }

  projects(options?: CallOptions): Promise<Success<Projects>> {
    return this.call('GET', '/api/v1/projects', {}, options);
  }
}
