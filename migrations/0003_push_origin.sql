ALTER TABLE `push_subscriptions` ADD `relay_origin` text;--> statement-breakpoint
CREATE INDEX `push_deliveries_turn` ON `push_deliveries` (`host_id`,`chat_id`,`turn_key`);