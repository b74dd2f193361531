import { ApiClient } from './api-client.js';
import type { CallOptions, JsonBody, Operation, Success } from './types.js';

type Handshake = Operation<'/v1/wp/handshake', 'post'>;
type Posts = Operation<'/v1/wp/posts/sync', 'post'>;
type Products = Operation<'/v1/wp/products/sync', 'post'>;
type Coupons = Operation<'/v1/wp/coupons/sync', 'post'>;
type PostsChanged = Operation<'/v1/wp/posts/changed', 'post'>;
type ProductsChanged = Operation<'/v1/wp/products/changed', 'post'>;

/** The bulk-sync API (/v1/wp/*): a workspace token `<id>|<secret>` as Bearer; limited per token. */
export class BulkSyncApi extends ApiClient {
  handshake(options?: CallOptions): Promise<Success<Handshake>> {
    return this.call('POST', '/v1/wp/handshake', {}, options);
  }

  syncPosts(body: JsonBody<Posts>, options?: CallOptions): Promise<Success<Posts>> {
    return this.call('POST', '/v1/wp/posts/sync', { json: body }, options);
  }

  syncProducts(body: JsonBody<Products>, options?: CallOptions): Promise<Success<Products>> {
    return this.call('POST', '/v1/wp/products/sync', { json: body }, options);
  }

  syncCoupons(body: JsonBody<Coupons>, options?: CallOptions): Promise<Success<Coupons>> {
    return this.call('POST', '/v1/wp/coupons/sync', { json: body }, options);
  }

  postsChanged(body: JsonBody<PostsChanged>, options?: CallOptions): Promise<Success<PostsChanged>> {
    return this.call('POST', '/v1/wp/posts/changed', { json: body }, options);
  }

  productsChanged(body: JsonBody<ProductsChanged>, options?: CallOptions): Promise<Success<ProductsChanged>> {
    return this.call('POST', '/v1/wp/products/changed', { json: body }, options);
  }
}
