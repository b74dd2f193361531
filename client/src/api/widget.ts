import { ApiClient, type ApiClientOptions } from './api-client.js';
import type { CallOptions, JsonBody, Operation, Query, Success } from './types.js';

type Init = Operation<'/api/v1/widget/init', 'post'>;
type Message = Operation<'/api/v1/widget/messages', 'post'>;
type History = Operation<'/api/v1/widget/conversation/messages', 'get'>;
type Clear = Operation<'/api/v1/widget/conversation/clear', 'post'>;
type RequestHuman = Operation<'/api/v1/widget/request-human', 'post'>;
type Events = Operation<'/api/v1/widget/events', 'post'>;
type Forget = Operation<'/api/v1/widget/me', 'delete'>;
type Leads = Operation<'/api/v1/widget/leads', 'post'>;
type Typing = Operation<'/api/v1/widget/typing', 'post'>;
type Satisfaction = Operation<'/api/v1/widget/satisfaction', 'post'>;
type Coupon = Operation<'/api/v1/widget/coupon/apply', 'post'>;

/**
 * The visitor widget (/api/v1/widget/*): `init` opens a session (limited per IP); the other calls
 * carry the session's JWT (limited per session): `withToken(session.token)`. JSON bodies.
 */
export class WidgetApi extends ApiClient {
  /** The same widget API, sending this visitor JWT as Bearer. */
  withToken(token: string): WidgetApi {
    return new WidgetApi({ ...this.options, token } satisfies ApiClientOptions);
  }

  init(body: JsonBody<Init>, options?: CallOptions): Promise<Success<Init>> {
    return this.call('POST', '/api/v1/widget/init', { json: body }, options);
  }

  sendMessage(body: JsonBody<Message>, options?: CallOptions): Promise<Success<Message>> {
    return this.call('POST', '/api/v1/widget/messages', { json: body }, options);
  }

  messages(query: Query<History> = {}, options?: CallOptions): Promise<Success<History>> {
    return this.call('GET', '/api/v1/widget/conversation/messages', { query }, options);
  }

  clearConversation(options?: CallOptions): Promise<Success<Clear>> {
    return this.call('POST', '/api/v1/widget/conversation/clear', {}, options);
  }

  requestHuman(options?: CallOptions): Promise<Success<RequestHuman>> {
    return this.call('POST', '/api/v1/widget/request-human', {}, options);
  }

  events(body: JsonBody<Events>, options?: CallOptions): Promise<Success<Events>> {
    return this.call('POST', '/api/v1/widget/events', { json: body }, options);
  }

  forgetMe(options?: CallOptions): Promise<Success<Forget>> {
    return this.call('DELETE', '/api/v1/widget/me', {}, options);
  }

  leads(body: JsonBody<Leads>, options?: CallOptions): Promise<Success<Leads>> {
    return this.call('POST', '/api/v1/widget/leads', { json: body }, options);
  }

  typing(body: JsonBody<Typing>, options?: CallOptions): Promise<Success<Typing>> {
    return this.call('POST', '/api/v1/widget/typing', { json: body }, options);
  }

  satisfaction(body: JsonBody<Satisfaction>, options?: CallOptions): Promise<Success<Satisfaction>> {
    return this.call('POST', '/api/v1/widget/satisfaction', { json: body }, options);
  }

  applyCoupon(body: JsonBody<Coupon>, options?: CallOptions): Promise<Success<Coupon>> {
    return this.call('POST', '/api/v1/widget/coupon/apply', { json: body }, options);
  }
}
