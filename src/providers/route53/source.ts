// Which Route 53 client a shared cache or lookup reads through.
import type { Route53Client } from '@aws-sdk/client-route-53';
import { clientOf, type ClientSource } from '../aws/readers.ts';

/** A Route 53 client, or a function answering the one to use now ({@link ClientSource}). */
export type Route53Source = ClientSource<Route53Client>;

/** The client a source stands for now. May throw (see {@link ClientSource}). */
export function route53Of(source: Route53Source): Route53Client {
  return clientOf(source);
}
